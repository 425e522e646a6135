"""The gate over lab records and their traces: the consistency rules (``consistency``), the traces
checked against the record (``verify``), and GATE 00's verdict (``verdict``)."""
