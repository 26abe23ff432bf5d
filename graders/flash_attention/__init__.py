"""The grading content of the flash_attention kata: its grader, domain, known bugs and alternative answers."""
