package sdktest

import (
	"testing"

	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	_ "github.com/ollama/ollama/api"
	_ "github.com/openai/openai-go/v3"
	_ "google.golang.org/genai"
)

func TestSDKsBuild(t *testing.T) {}
