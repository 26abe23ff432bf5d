"""The graders: the engine (graders/engine) and one folder per kata (graders/KATA: its grader,
domain, known bugs and alternative answers)."""
import os

# The repository's folder (the installed package's, in an install): where katas/, solutions/,
# graders/ and practice/ are. The one place it is worked out; the rest take it from here.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
