"""The grading content of the sliding_window kata: its grader, domain, known bugs and alternative answers."""
