"""The page as data: the node tree and the flattened list (`node_tree` over `node_models`, sized by
`node_columns`, filtered by `node_filter`) and the payload inspector (`inspector`)."""
