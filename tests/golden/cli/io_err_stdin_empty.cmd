scan -
