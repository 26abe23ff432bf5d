"""The grading content of the gqa kata: its grader, domain, known bugs and alternative answers."""
