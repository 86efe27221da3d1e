# 我的工具包：loop（接在 run_agent(…) 的位置）
# 由 toolkit.mine.save 从笔记本保存；可以直接修改这个文件，下次 load() 会读到。

import json

from toolkit import ToolResult, parse_tool_call

from toolkit.agent import SYSTEM_PROMPT

from toolkit.mine import pieces

my = pieces("executor", "format_message", "evaluate")

def tool_message(call, result, question, format_message, evaluate):
    """一条 tool 消息：你的 format_message 写消息，你的 evaluate 的决定放进 content 的 decision 字段。"""
    decision = evaluate(result, question)
    message = format_message(call.name, call.id, result)
    content = json.loads(message["content"])
    content["decision"] = {"action": decision["action"], "suggestion": decision.get("suggestion")}
    return {**message, "content": json.dumps(content, ensure_ascii=False)}


async def run_my_agent(question, client, model, executor, format_message=my.format_message,
                       evaluate=my.evaluate, max_turns=6, max_failures=3):
    """第二版：同一个工具连续失败 max_failures 次后不再执行，并告诉模型别再试。"""
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": question}]
    tools = executor.registry.openai_tools()
    failures = {}  # 工具名 → 连续失败了几次
    for turn in range(max_turns):
        reply = client.chat.completions.create(model=model, messages=messages,  # 同步：等到回复回来
                                               tools=tools).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content, messages
        for call in [parse_tool_call(c) for c in reply.tool_calls]:
            if failures.get(call.name, 0) >= max_failures:
                result = ToolResult(call.name, None, f"工具 {call.name} 已连续失败 {failures[call.name]} 次，不要再试，"
                                    "请告诉用户这一步失败了", error_type="fatal", error_code="TOOL_FAILURE_LIMIT")
            else:
                [result] = await executor.run_tool_calls([call])                # 异步：等工具
                failures[call.name] = failures.get(call.name, 0) + 1 if result.status == "error" else 0
            messages.append(tool_message(call, result, question, format_message, evaluate))
    return None, messages


PIECE = run_my_agent
