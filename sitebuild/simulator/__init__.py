"""The simulator at the top of the article, in one place: its data, cut into slices the page
fetches (:mod:`.data`), its HTML from one template (:mod:`.markup`), and the line vLLM would
log for a simulated run (:mod:`.log`)."""
