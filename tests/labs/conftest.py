"""Every lab test gets its own empty learner records folder: no test reads or writes the
real user data directory (subprocesses inherit the variable)."""

import pytest

from labs import records


@pytest.fixture(autouse=True)
def learner_records(tmp_path, monkeypatch):
    folder = tmp_path / "learner-records"
    monkeypatch.setenv(records.RECORDS_ENV, str(folder))
    return folder
