"""The grading content of the softmax kata: its grader, domain, known bugs and alternative answers."""
