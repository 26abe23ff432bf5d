"""The grading content of the swiglu kata: its grader, domain, known bugs and alternative answers."""
