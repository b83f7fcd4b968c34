package node

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// sdkClient is the OpenAI SDK pointed at n's API with key (a buyer's
// token; a provider takes any), never retrying: a test sees each answer.
func sdkClient(n *Node, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(n.APIURL()+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// streamChat streams one chat completion through c and returns it
// accumulated, with the number of chunks it came in.
func streamChat(t *testing.T, ctx context.Context, c openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, int) {
	t.Helper()
	s := c.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for s.Next() {
		acc.AddChunk(s.Current())
		chunks++
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return acc, chunks
}
