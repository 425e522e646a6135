"""Measurement (jax is imported only below here, and only when something is measured): the lab's ops
(``ops``), timing and rotation (``timing``), one jitted call measured (``calls``), traces (``profile``,
``xplane``, ``hloproto``, ``xprof_logdir``), the device (``device``), the calibration (``calibrate``),
the probes a miss is explained with (``probes``) and the memory hierarchy (``hierarchy``)."""
