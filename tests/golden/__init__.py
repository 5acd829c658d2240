"""Golden match records: committed records that any change of play or record format breaks.

``cases.py`` defines every case and is the only module here that imports project code;
``records/`` holds the approved records; ``python -m tests.golden.regenerate`` rewrites them.
"""
