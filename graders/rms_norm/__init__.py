"""The grading content of the rms_norm kata: its grader, domain, known bugs and alternative answers."""
