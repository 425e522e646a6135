"""Lab records: their typed form (``types``), the records folder as a small database (``folder``: paths,
lock, ledger, load and save, the schema ``record.schema.json``), and the evidence a record's numbers
make (``evidence``). Pure Python: nothing here imports jax or measures anything."""
