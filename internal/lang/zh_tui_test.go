package lang

// zhTUI holds the terminal UI's messages (internal/channel/tui): its
// input hint, footers, approval card, commands and notices. The keys a
// card takes stay the letters o, s, a and d. The binary carries it
// packed (zh_packed.go).
var zhTUI = map[string]string{
	"Message homard — Enter sends, Alt+Enter or Ctrl+J adds a line, /help": "给 homard 发消息 —— Enter 发送，Alt+Enter 或 Ctrl+J 换行，/help 查看帮助",
	" · %s mode": " · %s 模式",
	"Enter send · Alt+Enter/Ctrl+J new line · PgUp/PgDn scroll · /help · Ctrl+C quit": "Enter 发送 · Alt+Enter/Ctrl+J 换行 · PgUp/PgDn 滚动 · /help · Ctrl+C 退出",
	"working… Ctrl+C or /cancel stops the turn · PgUp/PgDn scroll":                    "处理中… Ctrl+C 或 /cancel 停止这一轮 · PgUp/PgDn 滚动",
	"cancelling…": "正在取消…",
	"Cancelling…": "正在取消…",
	"critical: o approve once · d deny · Esc leave pending · Ctrl+C cancel the turn": "严重：o 批准一次 · d 拒绝 · Esc 保持待定 · Ctrl+C 取消这一轮",
	"o once · s session · a always · d deny · Esc leave pending · Ctrl+C cancel":     "o 一次 · s 本会话 · a 始终 · d 拒绝 · Esc 保持待定 · Ctrl+C 取消",

	// The approval card.
	"approval needed: %s · risk %s · %s": "需要批准：%s · 风险 %s · %s",
	"plan hash %s":                       "计划哈希 %s",
	" · expires %s":                      " · %s 过期",
	"why: ":                              "原因：",
	"─ what it does ─":                   "─ 它会做什么 ─",
	"%d more lines; homard approval show %s --full":              "还有 %d 行；homard approval show %s --full",
	"critical: [o]nce · [d]eny · Esc leave pending":              "严重：[o] 一次 · [d] 拒绝 · Esc 保持待定",
	"[o]nce · [d]eny · Esc leave pending":                        "[o] 一次 · [d] 拒绝 · Esc 保持待定",
	"[o]nce · [s]ession · [d]eny · Esc leave pending":            "[o] 一次 · [s] 本会话 · [d] 拒绝 · Esc 保持待定",
	"[o]nce · [s]ession · [a]lways · [d]eny · Esc leave pending": "[o] 一次 · [s] 本会话 · [a] 始终 · [d] 拒绝 · Esc 保持待定",
	"session would cover: ":                                      "本会话将涵盖：",
	"session/always would cover: ":                               "本会话/始终将涵盖：",
	"approved once":                                              "已批准一次",
	"approved for this session":                                  "已在本会话中批准",
	"approved always (scoped rule)":                              "已始终批准（限定范围的规则）",
	"denied":                                                     "已拒绝",
	"left pending":                                               "保持待定",
	"cancelled":                                                  "已取消",
	"not answered":                                               "未回复",
	"This card can only be approved once (o) or denied (d).":     "此卡片只能批准一次（o）或拒绝（d）。",
	"This command runs code: approve it once (o), for this session (s), or deny it (d).": "此命令会运行代码：批准一次（o）、在本会话中批准（s），或拒绝（d）。",

	// Turns.
	"A turn is running: wait for it, or /cancel it.":                                                         "有一轮正在运行：请等待，或用 /cancel 取消。",
	"Cancelled. Nothing of this turn was kept in the conversation; tool calls it made are in the audit log.": "已取消。这一轮的内容没有保留在对话中；它发起的工具调用记录在审计日志里。",
	"error: %s":         "错误：%s",
	"Stopped early: %s": "提前停止：%s",
	"Waiting for approval %s: homard approval approve %s, then ask again.": "等待批准 %s：运行 homard approval approve %s 后再问一次。",
	"Resumed session %s.": "已恢复会话 %s。",

	// Commands.
	"Keys\n  Enter             send the message\n  Alt+Enter, Ctrl+J new line in the message\n  PgUp, PgDn        scroll the conversation (Ctrl+Home, Ctrl+End: top, bottom)\n  Ctrl+C            cancel the running turn; with none running, leave\nApproval cards\n  o once · s this session · a always (a scoped, expiring rule) · d deny\n  Esc leaves the call pending (homard approval approve ID later)\n  a critical plan takes only o or d\nCommands\n  /help    this help\n  /new     start a fresh session (the old one stays; --session ID resumes it)\n  /clear   the same: a fresh session and a clear screen\n  /cancel  stop the running turn: the model stream and a running tool\n  /budget  the last turn's tool calls and units of their maxima, and tokens;\n           the session's tokens, prompt-cache hits and memory capture calls\n  /budget N  at most N tool calls in each next turn (/budget off lifts it)\n  /tools off no tool offered in the next turns, for text you do not trust\n           (/tools on)\n  /exit    leave; a running turn is cancelled (Ctrl+C leaves when none runs)\nA message starting with // sends one leading /.": "按键\n  Enter             发送消息\n  Alt+Enter, Ctrl+J 在消息中换行\n  PgUp, PgDn        滚动对话（Ctrl+Home, Ctrl+End：顶部、底部）\n  Ctrl+C            取消正在运行的一轮；没有运行时退出\n批准卡片\n  o 一次 · s 本会话 · a 始终（限定范围、会过期的规则）· d 拒绝\n  Esc 让调用保持待定（稍后用 homard approval approve ID）\n  严重的计划只接受 o 或 d\n命令\n  /help    本帮助\n  /new     开始新会话（旧会话保留；--session ID 可恢复）\n  /clear   同上：新会话并清屏\n  /cancel  停止正在运行的一轮：模型输出和正在运行的工具\n  /budget  上一轮的工具调用次数和预算单位及其上限，以及 token；\n           本会话的 token、提示缓存命中和记忆捕获调用\n  /budget N  之后每一轮最多 N 次工具调用（/budget off 取消）\n  /tools off 之后几轮不提供工具，用于你不信任的文本\n           （/tools on 开启）\n  /exit    退出；正在运行的一轮会被取消（没有运行时 Ctrl+C 也会退出）\n以 // 开头的消息会发送一个开头的 /。",
	"No turn is running.":                                            "没有正在运行的一轮。",
	"A turn is running: /cancel it first.":                           "有一轮正在运行：请先用 /cancel 取消。",
	"New session %s. Resume it later with: homard chat --session %s": "新会话 %s。稍后可用以下命令恢复：homard chat --session %s",
	"Tools off: the next turns offer the model no tool, and any call it makes anyway is refused (limit.tools-off). /tools on turns them back on.": "工具已关闭：之后几轮不向模型提供任何工具，模型仍发起的调用一律拒绝（limit.tools-off）。/tools on 重新开启。",
	"Tools are off (/tools on).": "工具已关闭（/tools on 开启）。",
	"Unknown command %s. /help lists the commands; start a message with // to send a leading /.":                         "未知命令 %s。/help 列出所有命令；以 // 开头可发送一个开头的 /。",
	"\nNext turns: at most %d tool calls (/budget off lifts it).":                                                        "\n之后每一轮：最多 %d 次工具调用（/budget off 取消）。",
	"Usage: /budget (report), /budget N (at most N tool calls a turn), /budget off":                                      "用法：/budget（查看），/budget N（每轮最多 N 次工具调用），/budget off",
	"Next turns: at most %d tool calls each (never more than agent.max_calls).":                                          "之后每一轮最多 %d 次工具调用（不超过 agent.max_calls）。",
	"No turn has finished yet in this session.":                                                                          "本会话中还没有完成的一轮。",
	"Last turn: %d of %d tool calls, %d of %d budget units; tokens: %d in (%d cached), %d out.\n":                        "上一轮：工具调用 %d/%d 次，预算单位 %d/%d；token：输入 %d（缓存 %d），输出 %d。\n",
	"This session, %s in this chat: %d tokens in, %d out; prompt cache: %d tokens read (%d%% of the input), %d written.": "本会话在此聊天中共 %s：输入 %d token，输出 %d；提示缓存：读取 %d token（占输入的 %d%%），写入 %d。",
	"\nMemory capture in this session so far: %s covering %d turns; tokens: %d in (%d cached), %d out.":                  "\n本会话目前的记忆捕获：%s，涵盖 %d 轮；token：输入 %d（缓存 %d），输出 %d。",
	"1 turn":   "1 轮",
	"%d turns": "%d 轮",
	"1 call":   "1 次调用",
	"%d calls": "%d 次调用",
}
