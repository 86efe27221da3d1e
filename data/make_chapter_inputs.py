"""Make the teaching inputs of chapters 01-03 in data/input/, deterministically.

    python data/make_chapter_inputs.py          # (re)write the four files
    python data/make_chapter_inputs.py --check  # exit 1 if a committed file differs

All four are invented teaching data (the notes inside say so), consistent with
weather.json, flights.json and sales.csv where they overlap:

* weather_api_shanghai.json  a nested weather-API response (chapter 01: JSON strategy)
* query_orders_200.json      a 200-record database query result (01: query tools; 02: shrink_json)
* web_page_long.txt          a long web page whose answer is in its tail (01, 02)
* flight_prices.html         an HTML page with a table (01: HTML -> Markdown table)

Same code, same bytes: every random choice comes from random.Random with a fixed seed.
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

INPUT = Path(__file__).resolve().parent / "input"
NOTE = "教学用虚构数据：由 data/make_chapter_inputs.py 生成，不是真实数据。"


def weather_api() -> dict:
    """A weather API's full answer for 上海: far more than a model needs."""
    rng = random.Random(11)
    conditions = ["多云", "晴", "小雨", "阴", "多云", "雷阵雨", "晴"]
    daily = []
    for d in range(7):
        high = 28 + rng.randint(-3, 3) if d else 28
        low = 21 + rng.randint(-2, 2) if d else 21
        daily.append({
            "fx_date": f"2026-05-{16 + d:02d}", "sunrise": "05:0%d" % (2 - min(d, 2)), "sunset": "18:4%d" % (6 + d // 3),
            "moonrise": f"{(2 + d) % 24:02d}:{rng.randint(0, 59):02d}", "moonset": f"{(15 + d) % 24:02d}:{rng.randint(0, 59):02d}",
            "moon_phase": ["残月", "新月", "蛾眉月", "蛾眉月", "上弦月", "盈凸月", "盈凸月"][d],
            "temp_max": high, "temp_min": low, "text_day": conditions[d], "text_night": conditions[(d + 3) % 7],
            "wind_360_day": rng.choice([90, 135, 180, 225]), "wind_dir_day": rng.choice(["东风", "东南风", "南风"]),
            "wind_scale_day": "1-3", "wind_speed_day": rng.randint(3, 16),
            "humidity": 65 if d == 0 else rng.randint(55, 90), "precip": 0.0 if d == 0 else round(rng.random() * 8, 1),
            "pressure": rng.randint(1000, 1012), "vis": rng.randint(10, 25), "cloud": rng.randint(10, 95),
            "uv_index": rng.randint(2, 9),
        })
    hourly = []
    for h in range(24):
        hourly.append({
            "fx_time": f"2026-05-16T{(8 + h) % 24:02d}:00+08:00", "temp": 24 + round(4 * (1 - abs(h - 6) / 12)),
            "icon": rng.choice(["100", "101", "104", "305"]), "text": rng.choice(["多云", "晴", "阴", "小雨"]),
            "wind_360": rng.choice([90, 135, 180]), "wind_dir": "东南风", "wind_scale": "1-3",
            "wind_speed": rng.randint(3, 14), "humidity": rng.randint(55, 85), "pop": rng.randint(0, 60),
            "precip": 0.0, "pressure": rng.randint(1003, 1009), "cloud": rng.randint(20, 90), "dew": rng.randint(17, 22),
        })
    return {
        "_note": NOTE,
        "code": "200",
        "request_id": "req-7f3a9c20-lab",
        "api_version": "3.2.1",
        "update_time": "2026-05-16T08:00+08:00",
        "fx_link": "https://weather.example.com/shanghai-101020100.html",
        "location": {"name": "上海", "id": "101020100", "lat": 31.23, "lon": 121.47, "adm2": "上海",
                     "adm1": "上海市", "country": "中国", "tz": "Asia/Shanghai", "utc_offset": "+08:00",
                     "is_dst": "0", "type": "city", "rank": "11"},
        "now": {"obs_time": "2026-05-16T07:50+08:00", "temp": 28, "feels_like": 31, "icon": "101", "text": "多云",
                "wind_360": 135, "wind_dir": "东南风", "wind_scale": "2", "wind_speed": 9, "humidity": 65,
                "precip": 0.0, "pressure": 1006, "vis": 16, "cloud": 60, "dew": 21},
        "daily": daily,
        "hourly": hourly,
        "air": {"pub_time": "2026-05-16T07:00+08:00", "aqi": 42, "level": "1", "category": "优",
                "primary": "NA", "pm10": 38, "pm2p5": 21, "no2": 24, "so2": 6, "co": 0.6, "o3": 71},
        "alerts": [],
        "refer": {"sources": ["教学气象数据（虚构）"], "license": ["仅用于课程演示"]},
    }


CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都"]
PRODUCTS = [("键盘", 199), ("鼠标", 79), ("显示器", 899), ("耳机", 299), ("摄像头", 359)]
STATUSES = ["已支付", "已发货", "已完成", "已完成", "已完成", "已退款"]


def orders() -> list[dict]:
    """200 order rows, as a database query tool returns them."""
    rng = random.Random(200)
    rows = []
    for i in range(1, 201):
        category, price = rng.choice(PRODUCTS)
        quantity = rng.randint(1, 12)
        rows.append({
            "order_id": f"SO-2026-{i:04d}",
            "date": f"2026-04-{1 + (i - 1) * 30 // 200:02d}",
            "city": rng.choice(CITIES),
            "customer": f"客户{rng.randint(1, 80):03d}",
            "category": category,
            "quantity": quantity,
            "unit_price": price,
            "amount": quantity * price,
            "status": rng.choice(STATUSES),
        })
    return rows


SECTIONS = [
    ("发布会开场", "主持人介绍了实验电子成立十周年的历程，回顾了从第一款教学用开发板到如今整机产品的变化"),
    ("设计理念", "设计团队强调轻薄与耐用并重，机身采用再生铝材，转轴经过三万次开合测试"),
    ("屏幕", "14 英寸屏幕支持高刷新率与护眼模式，团队展示了在户外强光下的阅读效果"),
    ("性能", "新一代处理器在编译大型项目时比上一代快了不少，散热系统改为双风扇布局"),
    ("续航", "官方给出的办公续航测试覆盖网页浏览、文档编辑与视频会议三种场景"),
    ("键盘与触控板", "键程加深到 1.5 毫米，触控板面积比上一代大了约三成"),
    ("接口", "机身两侧提供两个全功能接口、一个标准接口和一个耳机孔，并保留了读卡器"),
    ("软件生态", "预装的开发者工具箱支持一键配置常见编程环境，面向高校课程做了适配"),
    ("教育合作", "实验电子宣布与多所高校合作开设实践课程，学生可以申请借用样机"),
    ("环保与回收", "包装全部改为纸质材料，旧机回收计划覆盖全国主要城市"),
    ("售后服务", "整机保修两年，电池保修一年，官方服务网点数量继续增加"),
    ("现场问答", "记者提问集中在散热、扩展性和教育优惠三个方面，工程师逐一作了说明"),
]
FILLER = [
    "现场演示环节中，工程师打开了多个应用并同时进行编译和视频播放，整机运行平稳。",
    "据介绍，这一改动来自过去一年收集到的数千条用户反馈。",
    "团队表示，后续还会通过系统更新持续优化相关体验。",
    "与上一代产品相比，这一部分的变化是本次发布会讨论最多的话题之一。",
    "多位到场的高校教师表示，这对实验课程的组织很有帮助。",
    "工程师补充说，相关测试数据会在官网的技术白皮书中公开。",
    "主持人随后播放了一段用户访谈视频，展示了产品在课堂上的使用场景。",
    "有观众问到与竞品的差异，发言人没有直接比较，只强调了自身的设计取舍。",
]


def web_page() -> str:
    """A long article from a web page: navigation, twelve sections, and the answer at the end."""
    rng = random.Random(7)
    lines = ["实验电子官网 > 新闻中心 > 产品发布",
             "首页 | 产品 | 教育 | 服务 | 关于我们 | 登录",
             "",
             "LabBook 14 发布会图文实录",
             "发布时间：2026-05-16 ｜ 来源：实验电子新闻中心 ｜ 阅读 12,408",
             ""]
    for n, (title, lead) in enumerate(SECTIONS, 1):
        lines.append(f"{n}. {title}")
        for _ in range(4):
            body = "".join(rng.sample(FILLER, 5))
            lines.append(f"{lead}。{body}")
        lines.append("")
    lines += ["13. 价格与上市时间",
              "发布会最后公布了价格：LabBook 14 标准版售价 5999 元，高配版售价 7499 元，教育优惠再减 500 元。"
              "首批产品将于 2026 年 6 月 18 日开售，5 月 20 日起接受预订。",
              "",
              "相关阅读：实验电子十年回顾 ｜ LabBook 13 评测汇总 ｜ 教育优惠申请指南",
              "© 2026 实验电子（虚构公司，教学用虚构内容） 沪ICP备00000000号"]
    return "\n".join(lines) + "\n"


def flight_page() -> str:
    """A web page with a flight price table among navigation, styles and scripts."""
    flights = json.loads((INPUT / "flights.json").read_text(encoding="utf-8"))["flights"]
    rows = "\n".join(
        f'        <tr class="row"><td class="no"><a href="/flight/{f["flight_no"]}">{f["flight_no"]}</a></td>'
        f'<td>{f["origin"]}</td><td>{f["destination"]}</td><td>{f["depart"]}</td><td>{f["arrive"]}</td>'
        f'<td class="price"><span class="cny">¥</span>{f["price"]}</td><td>{f["seats_left"]}</td></tr>'
        for f in flights)
    return f"""<!DOCTYPE html>
<html lang="zh-CN">
<head>
  <meta charset="utf-8">
  <title>实验航空 · 航班与票价</title>
  <style>
    body {{ font-family: sans-serif; margin: 0; }}
    .nav a {{ margin-right: 12px; color: #1a5fb4; }}
    table.fares {{ border-collapse: collapse; width: 100%; }}
    table.fares td, table.fares th {{ border: 1px solid #ccc; padding: 4px 8px; }}
    .price {{ color: #c01c28; font-weight: bold; }}
  </style>
  <script>window.dataLayer = window.dataLayer || []; function track(e) {{ dataLayer.push(e); }}</script>
</head>
<body>
  <div class="nav"><a href="/">首页</a><a href="/flights">航班</a><a href="/deals">特价</a><a href="/help">帮助</a></div>
  <!-- {NOTE} -->
  <h1>实验航空（虚构）航班与票价</h1>
  <p class="hint">票价为单程经济舱含税价，单位：元。余票实时变动，以下单页面为准。</p>
  <table class="fares">
    <thead>
      <tr><th>航班号</th><th>出发</th><th>到达</th><th>起飞</th><th>降落</th><th>票价</th><th>余票</th></tr>
    </thead>
    <tbody>
{rows}
    </tbody>
  </table>
  <div class="footer">© 2026 实验航空（虚构） · <a href="/privacy">隐私政策</a> · <a href="/terms">服务条款</a></div>
  <script>track({{"event": "page_view", "page": "fares"}});</script>
</body>
</html>
"""


def files() -> dict[str, str]:
    return {
        "weather_api_shanghai.json": json.dumps(weather_api(), ensure_ascii=False, indent=2) + "\n",
        "query_orders_200.json": "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in orders()) + "\n]\n",
        "web_page_long.txt": web_page(),
        "flight_prices.html": flight_page(),
    }


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, text in files().items():
        path = INPUT / name
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8", newline="\n")
            print(f"wrote data/input/{name} ({len(text)} characters)")
    if stale:
        print("out of date (run python data/make_chapter_inputs.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
