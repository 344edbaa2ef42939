"""Reading inputs: text files, JSON checks, run cards, test reports, segment metadata, CI."""
