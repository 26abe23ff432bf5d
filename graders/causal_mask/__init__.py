"""The grading content of the causal_mask kata: its grader, domain, known bugs and alternative answers."""
