"""The grading content of the top_p kata: its grader, domain, known bugs and alternative answers."""
