"""The quiz: a session's plan and loop (``session``), how it talks to a terminal (``terminal``), one
answer read and graded (``assess``), and the grading rules (``grading``)."""
