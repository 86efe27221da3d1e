"""Does nothing: says there is no table, whatever the page. It used to earn the "no table" and "within budget" points.

fails: html_table_header | 没有以 | 开头的 Markdown 表格行
fails: html_table_rows | 数据行应为
fails: first_table_only | 只转换第一张
fails: html_table_random | 转换后读回来是
fails: fits_unchanged | 读回 0 行
fails: within_budget | 输出里没有表格
fails: whole_rows | 原表的整行
fails: count_said | 仅显示前 k 行，共 n 行
fails: no_table | 有表格的页面也返回了
"""


def html_table_to_markdown(page, max_chars=2000):
    return "（页面里没有表格）"
