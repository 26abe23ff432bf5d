"""The grading content of the kv_cache kata: its grader, domain, known bugs and alternative answers."""
