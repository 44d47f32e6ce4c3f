package lang

// zhSets are the parts of the Chinese catalog, one per area, so that
// each area's messages are kept together. Key: the English text (a fmt
// format), value: its translation with the same verbs (an explicit
// index, %[2]s, may reorder them). The other parts (the CLI's, setup's,
// the memory review's, the chats', the TUI's and mcp login's) are packed
// (zhPacked, zh_packed.go).
var zhSets = []map[string]string{zhCommon, zhWeb}

// zhCommon holds messages shared by several surfaces.
var zhCommon = map[string]string{}
