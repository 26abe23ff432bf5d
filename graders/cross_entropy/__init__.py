"""The grading content of the cross_entropy kata: its grader, domain, known bugs and alternative answers."""
