"""The profiler's "Can't import tensorflow.python.profiler.trace" lines never reach the
learner's screen; anything else written to stderr meanwhile still does."""

import os

from labs.measure import profile


def test_tensorflow_import_warnings_are_dropped_and_other_lines_kept(capfd):
    with profile.quiet_profiler_noise():
        os.write(2, b"E1201 10:00:00.000 python_hooks.cc:416] Can't import tensorflow.python.profiler.trace\n")
        os.write(2, b"W1201 something the learner should see\n")
        os.write(2, b"E1201 10:00:00.001 python_hooks.cc:416] Can't import tensorflow.python.profiler.trace\n")
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "Can't import tensorflow" not in err
    assert "W1201 something the learner should see\n" in err and err.endswith("after\n")


def test_stderr_is_restored_when_the_profiler_raises(capfd):
    try:
        with profile.quiet_profiler_noise():
            os.write(2, b"kept line\n")
            raise RuntimeError("profiler failed")
    except RuntimeError:
        pass
    os.write(2, b"still here\n")
    err = capfd.readouterr().err
    assert "kept line" in err and "still here" in err
