"""The training index: built and searched (`retrieval`), stored beside the warehouse (`stored`),
searched in shards (`shards`), on a Ray cluster (`cluster`) or within a memory budget (`memory`)."""
