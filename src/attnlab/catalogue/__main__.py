"""Print the README's table of experiments from the catalogue (``python -m attnlab.catalogue``)."""

from attnlab.catalogue import experiments
from attnlab.catalogue.readme import experiments_table

print(experiments_table(experiments()))
