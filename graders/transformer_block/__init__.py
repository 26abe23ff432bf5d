"""The grading content of the transformer_block kata: its grader, domain, known bugs and alternative answers."""
