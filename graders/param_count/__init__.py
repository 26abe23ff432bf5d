"""The grading content of the param_count kata: its grader, domain, known bugs and alternative answers."""
