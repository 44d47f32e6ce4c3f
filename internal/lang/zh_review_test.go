package lang

// zhReview is the weekly memory review's part of the Chinese catalog
// (internal/memreview: its card, and its lines in `homard memory review`).
// The binary carries it packed (zh_packed.go).
var zhReview = map[string]string{
	"%d proposals of the model failed the checks and were dropped.":         "模型的 %d 条提议未通过检查，已丢弃。",
	"%q: want a proposal's number or all (homard memory review lists them)": "%q：应为提议编号或 all（homard memory review 会列出它们）",
	"On the computer: homard memory review approve N|all, or dismiss [N].":  "在电脑上：homard memory review approve N|all，或 dismiss [N]。",
	"Approve %d":                        "批准 %d",
	"Memory review: nothing to change.": "记忆整理：没有需要更改的内容。",
	"Proposal %d was not applied: memory.md changed since this review was made. Run `homard memory review --now` for a new review.": "提议 %d 未应用：自本次整理以来 memory.md 已被修改。请运行 `homard memory review --now` 重新整理。",
	"Weekly memory review: %d proposals. Nothing changes until you approve one.\n":                                                  "每周记忆整理：%d 条提议。在你批准之前不会做任何更改。\n",
	" → %q": " → %q",
	"memory holds fewer than two notes: nothing to review":                            "记忆中的笔记少于两条：没有可整理的内容",
	"no memory review waits with that id (homard memory review --now makes one)":      "没有该 ID 的待处理记忆整理（homard memory review --now 会新建一次）",
	"the review has no waiting proposal with that number":                             "本次整理没有该编号的待处理提议",
	"the review model could not be asked (only exact duplicates were looked for): %v": "无法询问整理模型（只查找了完全相同的重复）：%v",
}
