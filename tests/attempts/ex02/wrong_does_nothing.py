"""Does nothing: hands the text back as it came. Only the short texts are right.

fails: valid_json | 没有截断
fails: head_and_tail | 没有截断
fails: exact_note | 没有截断
fails: within_budget | 说明文字也算在预算里
fails: chinese_unescaped | 没有截断
fails: fills_budget | 没有截断
fails: text_falls_back | 不能超过
fails: random_arrays | 没有截断
"""
def truncate_json_rows(text, max_chars):
    """Does nothing: hands the text back as it came."""
    return text
