"""The report's charts wing: every chart of the report, the compare page and the site, drawn as SVG
from the plain rows a page hands it (svg holds the canvas, panels, axes and marks; series_styles a
colour per series; value_marks a bar or a dot per value). It draws and decides nothing else: it
never imports the site/ wing or the modules that build a page."""
