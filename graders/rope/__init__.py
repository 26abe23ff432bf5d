"""The grading content of the rope kata: its grader, domain, known bugs and alternative answers."""
