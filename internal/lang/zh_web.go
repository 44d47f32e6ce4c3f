package lang

import "strings"

// zhWeb holds the web UI's messages: the scripts' t("…") keys
// (internal/channel/web/ui/static) and the server's own pages
// (internal/channel/web). The API's fields and errors stay English.
//
// One entry a line: the English key, a tab, the translation. A packed
// text rather than a map literal: its keys are not in the binary
// elsewhere (they are the scripts'), and a map literal's string headers
// cost 32 bytes an entry (6.6 KB here) of the binary's budget.
var zhWeb = unpackText(zhWebText)

const zhWebText = ` (why: %s)	（原因：%s）
(no longer in memory)	（已不在记忆中）
Approve all	全部批准
merge	合并
delete	删除
replace	替换
dismissed	已放弃
stale	已过时
[image: %s] %s	[图片：%s] %s
 Warning: %s	 警告：%s
 · busy	 · 忙碌
 · has read your data: fetches ask	 · 已读取你的数据：联网获取需询问
 — Show it again to read the task as it is now.	 —— 请重新显示，查看任务当前的内容。
%d approval(s) pending	%d 个批准待处理
%d turns · last %s	%d 轮 · 最近 %s
%s on %s	%s，作用于 %s
%s · up to %s risk · until %s	%s · 风险上限 %s · 至 %s
%s: done.	%s：完成。
(no message yet)	（还没有消息）
: it waits, pending, until you approve its exact body.	：它会保持待定，直到你批准其确切内容。
A reminder: deliver this text as it is, with no model and no tools	提醒：原样发送这段文字，不使用模型，也不使用工具
A session or always approval lets later calls it covers run without asking. Revoke one to be asked again.	会话或始终批准会让其涵盖的后续调用无需询问即可运行。撤销后将重新询问。
Add a task	添加任务
Add, pending my approval	添加，等待我批准
Added, pending: nothing runs until you approve this body.	已添加，待定：在你批准此内容之前不会运行任何东西。
Address	地址
Answering…	正在回答…
Apply	应用
Approval ends	批准截止
Approval for %s	%s 的批准
Approval lasts	批准有效期
Approvals	批准
Approve	批准
Approve %s?	批准 %s？
Approve body %s	批准内容 %s
Approved	已批准
Approved and used	已批准并已使用
Asked by	请求者
At what time (in the time zone)	在什么时间（按所选时区）
Audit	审计
Audit timeline	审计时间线
Body hash	内容哈希
Browser	浏览器
Cancel	取消
Ceiling	上限
Chat	聊天
Code from your authenticator app	身份验证器应用中的验证码
Connection lost: %s	连接中断：%s
Cron expression, 5 fields (in the time zone)	Cron 表达式，5 个字段（按所选时区）
Decision	决定
Delete	删除
Delete session %s	删除会话 %s
Delete this conversation for good? The audit trail keeps its calls.	永久删除这段对话？审计记录会保留其中的调用。
Deliver results to	结果发送到
Delivery	投递
Dismiss	忽略
Ended	结束
Error: %s	错误：%s
Every how long	每隔多久
Exactly what will run:	将要运行的确切内容：
Exactly what you approve (the task's body, as stored):	你所批准的确切内容（任务内容，按存储原样）：
Expired	已过期
Expires	过期
Forget	忘记
Forget this for good?	永久忘记这条？
From	来源
Hand back	交还
Hash	哈希
How it is scheduled	调度方式
Id	ID
It was used already, it expired (links last 10 minutes), or it was mistyped. Run <code>homard login</code> on the machine running <code>homard serve</code> for a new one.	它已被使用、已过期（链接有效期 10 分钟）或输入有误。请在运行 <code>homard serve</code> 的机器上运行 <code>homard login</code> 获取新链接。
Keep	保留
Last runs	最近运行
Live updates	实时更新
Load more	加载更多
Memory	记忆
Message	消息
Message (Enter sends, Shift+Enter new line)	消息（Enter 发送，Shift+Enter 换行）
Mode	模式
Name	名称
New	新建
New session	新会话
Next runs	接下来的运行
No longer pending	不再待定
No match.	没有匹配项。
No records.	没有记录。
No runs yet.	还没有运行。
No sessions yet.	还没有会话。
No standing approvals.	没有持续有效的批准。
No tasks yet. Add one with Add a task, or with homard task add.	还没有任务。点“添加任务”添加一个，或使用 homard task add。
Nothing here.	这里什么也没有。
Nothing remembered yet.	还没有记住任何东西。
Nothing to review.	没有需要审阅的内容。
Open	打开
Open the login URL printed by <code>homard serve</code> in this browser. It works once and for 10 minutes; run <code>homard login</code> on that machine for a new one.	请在此浏览器中打开 <code>homard serve</code> 打印的登录链接。它只能使用一次，有效期 10 分钟；在那台机器上运行 <code>homard login</code> 可获取新链接。
Page	页面
Pause	暂停
Refresh	刷新
Refused calls	被拒绝的调用
Remember	记住
Remember, forget %s	记住，并忘记 %s
Remove	移除
Renew (days)	续期（天）
Renew for how many days	续期多少天
Resume	恢复
Review queue	待审阅
Revoke	撤销
Schedule	调度
Scheduled tasks	计划任务
Seal	封印
Seal if approved	批准后的封印
Search	搜索
Send	发送
Session	会话
Session or always would cover	本会话或始终将涵盖
Session would cover	本会话将涵盖
Sessions	会话
Show	显示
Show again	重新显示
Show all (%d more lines)	显示全部（还有 %d 行）
Show all (failed: %s)	显示全部（失败：%s）
Show task %s	显示任务 %s
Skip to the message box	跳到消息框
Slot	时段
Standing approvals	持续有效的批准
Started	开始
Status	状态
Stop	停止
Summarise inbox.txt in five lines	用五行总结 inbox.txt
Summary or error	摘要或错误
Take over	接管
Task	任务
Task %s	任务 %s
Tasks	任务
Tasks run unattended, held to the body you approved. Add one here or with	任务在无人值守时运行，严格限于你批准的内容。可在此添加，或使用
The browser is not running; it starts when homard's model first uses it.	浏览器未运行；homard 的模型首次使用时会启动它。
The browser's page: click and type here while you have it	浏览器页面：由你控制时可在此点击和输入
Thinking…	思考中…
This login link is not valid	此登录链接无效
Time zone	时区
Tokens	Token
Tool	工具
Tools	工具
Tools, separated by commas	工具，用逗号分隔
Transcript	对话记录
Views	视图
Waiting for your answer	等待你的回复
Waiting for your approval…	等待你的批准…
Weekly memory review	每周记忆整理
What it does	它做什么
What it does:	它会做什么：
When	时间
When it runs	运行时间
While you have the browser, homard's model cannot use it.	在你控制浏览器期间，homard 的模型无法使用它。
Why	原因
Yes, delete	确定删除
Yes, forget	确定忘记
You	你
You are logged in. This build has no web UI; the API is at <code>/api/</code> (see docs/API.md).	你已登录。此版本没有 Web 界面；API 位于 <code>/api/</code>（见 docs/API.md）。
You are not logged in. Open the login URL printed by	你尚未登录。请打开以下命令打印的登录链接：
You have the browser.	浏览器由你控制。
all	全部
answered elsewhere	已在别处回复
answered elsewhere or expired	已在别处回复或已过期
any	任意
approval %s	批准 %s
approved	已批准
approved until %s	批准有效至 %s
calls %s/%s	调用 %s/%s
calls without a path	不带路径的调用
chat (approved in a conversation)	聊天（在对话中批准）
cli (homard task add)	命令行（homard task add）
code	验证码
conflicts with %s	与 %s 冲突
consumed	已使用
empty: the [automation] setting	留空：使用 [automation] 中的设置
error	错误
every	每隔
every session	所有会话
expired	已过期
expired at %s	已于 %s 过期
expires %s	%s 过期
failed	失败
from %s	来自 %s
hash %s	哈希 %s
hidden character U+%s	隐藏字符 U+%s
homard's model has the browser.	浏览器由 homard 的模型控制。
in %d min %d s (%s)	%d 分 %d 秒后（%s）
in %d s (%s)	%d 秒后（%s）
last run %s %s	上次运行 %s %s
letters, digits,	字母、数字、
live	在线
mode %s	%s 模式
next %s	下次 %s
none	无
none (sealed before ceilings)	无（在有上限之前封印）
not delivered yet	尚未投递
offline	离线
on a cron schedule	按 cron 计划
once, at	一次，在
only these:	仅这些：
pending	待定
proposed	已提出
ran	已运行
rule %s	规则 %s
running	运行中
scope: %s	范围：%s
screenshot	截图
session %s	会话 %s
since %s	自 %s
stopped: %s	已停止：%s
the model in session %s	会话 %s 中的模型
the read-only tools (default)	只读工具（默认）
this session (%s)	本会话（%s）
tokens in %d out %d	token 输入 %d 输出 %d
trust %s	信任 %s
units %s/%s	单位 %s/%s
unknown	未知
unknown risk	未知风险
web (this page)	网页（本页）
whole result	完整结果
workspace %s	工作区 %s`

// unpackText reads "key\ttranslation" lines into a map.
func unpackText(text string) map[string]string {
	m := make(map[string]string, strings.Count(text, "\n")+1)
	for line := range strings.SplitSeq(text, "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			m[k] = v
		}
	}
	return m
}
