"""The walkthrough page of `fusec explain MODEL.py --html FILE`: one self-contained HTML file.

    page.py         the page: its sections, from an Explanation and a Compilation (render_page)
    stage_views.py  each stage as the page shows it: the passes that made it, the ops, the diff
    roofline.py     the roofline picture (SVG), from `fusec bench --json` results
    assets.py       the inline CSS and script
"""
