package tokens

import "math"

// Cost returns what an image of w×h pixels costs under the rule. detail is
// the image part's detail level ("low", "high", "auto" or ""); only the tile
// method (OpenAI) uses it, and anything but "low" counts as high, because
// "auto" lets the model choose and high is the dearer choice. A size that
// is not positive costs Unknown.
func (r ImageRule) Cost(w, h int, detail string) int {
	if w <= 0 || h <= 0 {
		return r.Unknown
	}
	fw, fh := float64(w), float64(h)
	switch r.Method {
	case "tile":
		if detail == "low" {
			return r.Low
		}
		return r.Base + r.Tile*openAITiles(fw, fh)
	case "patch":
		return int(math.Ceil(float64(openAIPatches(fw, fh)) * r.Multiplier))
	case "pixels":
		return pixelTokens(fw, fh, float64(r.Divisor), float64(r.MaxEdge), float64(r.MaxTokens))
	case "gemini":
		return r.Tile * geminiTiles(fw, fh, float64(r.Small))
	case "fixed":
		return r.Tokens
	}
	return r.Unknown
}

// exactImages reports whether the rule's counts are what the provider
// reports. Only the tile rule has been matched against reported usage; the
// patch rule's published multipliers disagree with some reported counts
// (docs/tokens.md).
func (r ImageRule) exactImages() bool { return r.Method == "tile" }

// openAITiles scales an image to fit 2048×2048, then its shortest side down
// to 768, and counts the 512-pixel tiles that cover it. Scaled sides are
// rounded half to even, which reproduces reported counts at the edges
// (2049×513 costs 8 tiles, 2050×513 costs 4).
func openAITiles(w, h float64) int {
	if w > 2048 || h > 2048 {
		s := 2048 / math.Max(w, h)
		w, h = math.RoundToEven(w*s), math.RoundToEven(h*s)
	}
	if short := math.Min(w, h); short > 768 {
		s := 768 / short
		w, h = math.RoundToEven(w*s), math.RoundToEven(h*s)
	}
	return int(math.Ceil(w/512) * math.Ceil(h/512))
}

// openAIPatches counts the 32-pixel patches that cover an image, scaling it
// down first when more than 1536 would be needed, as OpenAI publishes for
// its patch-priced models.
func openAIPatches(w, h float64) int {
	const patch, maxPatches = 32.0, 1536.0
	n := math.Ceil(w/patch) * math.Ceil(h/patch)
	if n <= maxPatches {
		return int(n)
	}
	r := math.Sqrt(patch * patch * maxPatches / (w * h))
	r *= math.Min(math.Floor(w*r/patch)/(w*r/patch), math.Floor(h*r/patch)/(h*r/patch))
	n = math.Ceil(math.Floor(w*r)/patch) * math.Ceil(math.Floor(h*r)/patch)
	return int(min(n, maxPatches))
}

// pixelTokens is Anthropic's rule: an image whose long edge exceeds maxEdge,
// or that would cost more than maxTokens, is first scaled down keeping its
// aspect ratio; then it costs width×height/divisor.
func pixelTokens(w, h, divisor, maxEdge, maxTokens float64) int {
	if long := math.Max(w, h); long > maxEdge {
		s := maxEdge / long
		w, h = math.Floor(w*s), math.Floor(h*s)
	}
	if w*h/divisor > maxTokens {
		s := math.Sqrt(maxTokens * divisor / (w * h))
		w, h = math.Floor(w*s), math.Floor(h*s)
	}
	return max(1, int(math.Ceil(w*h/divisor)))
}

// geminiTiles is Gemini's rule: an image within small×small pixels is one
// tile; a larger one is cropped into square tiles whose side is the shorter
// side divided by 1.5, kept between 256 and 768 pixels.
func geminiTiles(w, h, small float64) int {
	if w <= small && h <= small {
		return 1
	}
	side := math.Min(math.Max(math.Min(w, h)/1.5, 256), 768)
	return int(math.Ceil(w/side) * math.Ceil(h/side))
}
