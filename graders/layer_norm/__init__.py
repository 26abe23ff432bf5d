"""The grading content of the layer_norm kata: its grader, domain, known bugs and alternative answers."""
