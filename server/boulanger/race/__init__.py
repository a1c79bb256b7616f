"""Race logic as plain Python: protocol messages, races, standings, daily challenges."""
