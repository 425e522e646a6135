"""The learner's command ``drill``: roofline calculator, decks, quizzes, the lab."""
