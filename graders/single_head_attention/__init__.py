"""The grading content of the single_head_attention kata: its grader, domain, known bugs and alternative answers."""
