"""The original course's parse_tool_result, given the exercise's signature.

fails: error_none_is_success | 被当成了失败
fails: status_error_is_failure | 即使 error 是空的
fails: html_table_header | 没有以 | 开头的 Markdown 表格行
fails: html_table_rows | 数据行应为
fails: html_table_random | 转换后读回来是
fails: json_keeps_values | 不是合法 JSON
fails: within_budget | max_chars=60
"""
import json


def parse_tool_output(raw, max_chars=2000):
    if isinstance(raw, dict):
        if 'error' in raw:
            return f"❌ 工具执行失败: {raw['error']}"
        return json.dumps(raw, ensure_ascii=False, indent=2)
    if isinstance(raw, str):
        if len(raw) > max_chars:
            return raw[:max_chars // 2] + f"\n\n... (省略 {len(raw) - max_chars // 2} 字符) ..."
        return raw
    return str(raw)
