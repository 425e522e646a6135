"""The collectives lab: the plan, predictions and scoring (``lab``, pure Python), the typed record
(``record``, schema ``collectives.schema.json``), and the run on a device mesh (``run``, jax)."""
