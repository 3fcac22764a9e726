"""memcglab predict: the scenario contract."""
