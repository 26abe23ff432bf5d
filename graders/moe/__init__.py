"""The grading content of the moe kata: its grader, domain, known bugs and alternative answers."""
