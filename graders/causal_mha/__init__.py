"""The grading content of the causal_mha kata: its grader, domain, known bugs and alternative answers."""
