"""boulanger's benchmarks: scripts that print figures, and what they share.

Each script runs by its path (``.venv/bin/python bench/<script>.py``);
``bench/README.md`` lists them with the question each answers.
"""
