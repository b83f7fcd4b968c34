package inference

import "context"

// AnswerResampler is a Resampler whose draws may depend on the answer so
// far (a response format's grammar masks each step by the text before
// it): answered is how many of prompt's last tokens are tokens of the
// answer, emitted before output.
type AnswerResampler interface {
	ResampleAnswer(ctx context.Context, prompt []int, answered int, output []int, k int, sp Sampling) ([][]LogProb, []int, error)
}
