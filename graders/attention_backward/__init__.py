"""The grading content of the attention_backward kata: its grader, domain, known bugs and alternative answers."""
