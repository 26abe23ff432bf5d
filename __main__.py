"""`python -m attention_katas`: the `kata` command, for an environment whose scripts folder is
not on PATH (installed, this file is attention_katas/__main__.py)."""
from attention_katas import main

main()
