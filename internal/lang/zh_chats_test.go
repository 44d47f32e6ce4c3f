package lang

// zhChats holds the chat core's messages (internal/chats): approval
// cards and their buttons, press notices, reminders' buttons, the chat
// commands' replies and pairing. The card labels are shared with the
// TUI and the web UI. The binary carries it packed (zh_packed.go).
var zhChats = map[string]string{
	// Approval cards.
	"Approval needed: %s\n\n%s\n\nrisk: %s\nwhy: %s\nplan hash: %s\n":     "需要批准：%s\n\n%s\n\n风险：%s\n原因：%s\n计划哈希：%s\n",
	"(the whole preview: homard approval show %s --full)\n":               "（完整预览：homard approval show %s --full）\n",
	"\n\"This session\" or \"Always\" also lets run without asking: %s\n": "\n选择“本会话”或“始终”还会让以下操作无需再问即可运行：%s\n",
	"\n\"This session\" also lets run without asking: %s\n":               "\n选择“本会话”还会让以下操作无需再问即可运行：%s\n",
	"Approve once":                       "批准一次",
	"This session":                       "本会话",
	"Always":                             "始终",
	"Deny":                               "拒绝",
	"Approved once":                      "已批准一次",
	"Approved for this session":          "已在本会话中批准",
	"Approved always":                    "已始终批准",
	"Denied":                             "已拒绝",
	"Answered here: %s.":                 "已在此处回复：%s。",
	"Answered elsewhere: denied.":        "已在别处回复：已拒绝。",
	"Answered elsewhere: approved (%s).": "已在别处回复：已批准（%s）。",
	"This card has expired.":             "此卡片已过期。",
	"This card was answered elsewhere or has expired.": "此卡片已在别处回复或已过期。",

	// Press notices.
	"This button is not for you.":                                                          "这个按钮不是给你的。",
	"This card was already answered or has expired.":                                       "此卡片已被回复或已过期。",
	"This card can only be approved once or denied; it is still waiting.":                  "此卡片只能批准一次或拒绝；它仍在等待。",
	"This card can be approved once or for this session, not always; it is still waiting.": "此卡片可以批准一次或在本会话中批准，但不能始终批准；它仍在等待。",
	"homard could not record that answer; try `homard approval` on the computer.":          "homard 未能记录这个回复；请在电脑上使用 `homard approval`。",
	"Approving this needs a code from your authenticator app: approve it in the web UI or with `homard approval approve ID --code CODE`; it is still waiting.": "批准此项需要身份验证器应用中的验证码：请在 Web 界面中批准，或使用 `homard approval approve ID --code CODE`；它仍在等待。",

	// Reminders.
	"Snooze 1h":               "1 小时后提醒",
	"Done":                    "完成",
	"Done.":                   "已完成。",
	"Snoozed until %s.":       "已推迟到 %s。",
	"Could not snooze it: %s": "无法推迟：%s",

	// Notices and turns.
	"This bot is private: it answers its owner only.":                     "这是私人机器人：它只回复它的主人。",
	"This bot answers only in chats its owner allowed, so it is leaving.": "这个机器人只在主人允许的聊天中回复，因此将退出。",
	"Started a new conversation.":                                         "已开始新对话。",
	"A message of yours was interrupted by a restart of homard and was not run again; its tools may have acted. `homard audit` on the computer shows what ran.": "你的一条消息因 homard 重启而中断，且未再次运行；其工具可能已经执行。在电脑上运行 `homard audit` 可查看运行了什么。",
	"\n\n(homard stopped this turn early: %s)": "\n\n（homard 提前结束了这一轮：%s）",
	"That did not work: homard could not finish this turn. The log of `homard serve` on the computer says why.":         "没有成功：homard 无法完成这一轮。电脑上 `homard serve` 的日志说明了原因。",
	"Tools are off in this chat, and /split runs workers with tools: send /tools on first, or the task without /split.": "此聊天中工具已关闭，而 /split 会用工具运行工作者：请先发送 /tools on，或不带 /split 发送任务。",
	"/split is not available in this homard.": "此 homard 不支持 /split。",
	"Usage: /split TASK — a planner writes a plan of workers that never share what they read (public ones read the web, sensitive ones your files); you approve the plan here before anything runs.": "用法：/split 任务 —— 规划者写出一份由工作者执行的计划，工作者之间从不共享各自读到的内容（公开的读网页，敏感的读你的文件）；任何步骤运行前，你先在这里批准计划。",

	// Commands.
	"Commands (this chat only):\n/new or /clear — start a new conversation (the old one stays in homard)\n/split TASK — a planner without tools plans, workers do each step\n/budget — this chat's tool-call cap; /budget N caps each next turn at N tool calls (never above agent.max_calls); /budget off lifts it\n/tools off — the next turns offer the model no tool, and any call it makes anyway is refused (for text from somewhere you do not trust); /tools on turns them back on\nAnything else goes to the model. Settings are kept until you change them, restarts included.": "命令（仅限本聊天）：\n/new 或 /clear —— 开始新对话（旧对话保留在 homard 中）\n/split 任务 —— 不带工具的规划者做计划，工作者执行每一步\n/budget —— 本聊天的工具调用上限；/budget N 将之后每一轮限制为最多 N 次工具调用（不超过 agent.max_calls）；/budget off 取消上限\n/tools off —— 之后几轮不向模型提供任何工具，模型仍发起的调用一律拒绝（用于你不信任来源的文本）；/tools on 重新开启\n其他内容都会发给模型。设置会一直保留到你更改为止，重启后也一样。",
	"No cap set in this chat: turns use agent.max_calls. /budget N sets one.":                                                                                  "此聊天未设上限：每轮使用 agent.max_calls。/budget N 可设置上限。",
	"Each turn in this chat: at most %d tool calls (/budget off lifts it).":                                                                                    "此聊天每轮最多 %d 次工具调用（/budget off 取消上限）。",
	"Tool-call cap lifted: turns use agent.max_calls.":                                                                                                         "已取消工具调用上限：每轮使用 agent.max_calls。",
	"Usage: /budget (report), /budget N (at most N tool calls a turn, 1 to 1000), /budget off":                                                                 "用法：/budget（查看），/budget N（每轮最多 N 次工具调用，1 到 1000），/budget off",
	"Next turns in this chat: at most %d tool calls each (never more than agent.max_calls).":                                                                   "此聊天之后每轮最多 %d 次工具调用（不超过 agent.max_calls）。",
	"Tools off: the next turns in this chat offer the model no tool, and any call it makes anyway is refused (limit.tools-off). /tools on turns them back on.": "工具已关闭：此聊天之后几轮不向模型提供任何工具，模型仍发起的调用一律拒绝（limit.tools-off）。/tools on 重新开启。",
	"Tools on.": "工具已开启。",
	"Tools are off in this chat (/tools on).":                             "此聊天中工具已关闭（/tools on 开启）。",
	"Tools are on (/tools off for text from somewhere you do not trust).": "工具已开启（处理你不信任来源的文本时用 /tools off）。",
	"Usage: /tools off, /tools on":                                        "用法：/tools off，/tools on",

	// Pairing.
	"Code accepted. Confirm on the computer where `homard pair` runs.": "验证码已接受。请在运行 `homard pair` 的电脑上确认。",
	"That code is not valid.": "这个验证码无效。",
	"That code is not valid. This account sent too many wrong codes, so it is not heard again for this pairing; if you are the owner, run `homard pair` again.": "这个验证码无效。此账号发送了太多错误验证码，本次配对中不再受理；如果你是主人，请重新运行 `homard pair`。",
	"Too many wrong codes were sent to this bot in the last minute, so this one was not checked (and nothing was used up). Wait a minute and send it again.":    "过去一分钟内有太多错误验证码发给了这个机器人，因此这次未作检查（也没有消耗任何次数）。请等一分钟后再发送。",
	"Paired: this account is now the owner of this homard.": "已配对：此账号现在是这个 homard 的主人。",
	"The pairing was declined on the computer.":             "配对已在电脑上被拒绝。",
}
