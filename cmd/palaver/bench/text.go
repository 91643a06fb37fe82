package bench

import (
	"math/rand/v2"
	"strings"
)

// The bench seeds text that reads like a language to a search engine: a
// vocabulary of common English words followed by a few thousand made-up
// ones, drawn with a Zipf spread (the k-th word about k^-1.1 as often as
// the first), so that common words are in a large part of the messages and
// rare ones in a few hundred of a million, as in real conversations. The
// same seed gives the same vocabulary and text.

// englishWords are the head of the vocabulary, most frequent first:
// function words, then common content words.
const englishWords = `the of and to a in is it you that for was on are with as i his they be at one have this
from or had by not but what some we can out other were all there when up use your how said an each she which do
their if will way about many then them would like so these her long make thing see him two has look more day could
go come did my no most who over know than call first may down side been now find any new work part take get place
made live where after back little only round man year came show every good me give our under name very through just
form sentence great think say help low line differ turn cause much mean before move right boy old too same tell does
set three want air well also play small end put home read hand port large spell add even land here must big high such
follow act why ask men change went light kind off need house picture try us again animal point mother world near
build self earth father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might story saw far sea
draw left late run while press close night real life few north open seem together next white children begin got walk
example ease paper group always music those both mark often letter until mile river car feet care second book carry
took science eat room friend began idea fish mountain stop once base hear horse cut sure watch color face wood main
enough plain girl usual young ready above ever red list though feel talk bird soon body dog family direct pose leave
song measure door product black short numeral class wind question happen complete ship area half rock order fire south
problem piece told knew pass since top whole king space heard best hour better true during hundred five remember step
early hold west ground interest reach fast verb sing listen six table travel less morning ten simple several vowel
toward war lay against pattern slow center love person money serve appear road map rain rule govern pull cold notice
voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green oh quick develop ocean warm free
minute strong special mind behind clear tail produce fact street inch multiply nothing course stay wheel full force
blue object decide surface deep moon island foot system busy test record boat common gold possible plane stead dry
wonder laugh thousand ago ran check game shape equate hot miss brought heat snow tire bring yes distant fill east
paint language among code model data server query error file function table index build deploy test review release`

// madeUpWords is how many invented words follow the English ones.
const madeUpWords = 4000

// vocabulary returns the bench's words, most frequent first.
func vocabulary() []string {
	words := strings.Fields(englishWords)
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	r := rand.New(rand.NewPCG(1, 2))
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br ch cl dr fl gr pl pr sh st th tr")
	vowels := strings.Fields("a e i o u a e i o ai ea ou")
	codas := strings.Fields("n r s l t m k nd st")
	for added := 0; added < madeUpWords; {
		var b strings.Builder
		for range 2 + r.IntN(2) {
			b.WriteString(onsets[r.IntN(len(onsets))])
			b.WriteString(vowels[r.IntN(len(vowels))])
		}
		if r.IntN(2) == 0 {
			b.WriteString(codas[r.IntN(len(codas))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
			added++
		}
	}
	return words
}

// textGen writes messages from the vocabulary.
type textGen struct {
	words []string
	r     *rand.Rand
	zipf  *rand.Zipf
}

func newTextGen(words []string, seed uint64) *textGen {
	r := rand.New(rand.NewPCG(seed, 7))
	return &textGen{words: words, r: r, zipf: rand.NewZipf(r, 1.1, 1, uint64(len(words)-1))}
}

// message writes one message: a user's is a sentence or two, a reply a few.
func (g *textGen) message(assistant bool) string {
	n := 6 + g.r.IntN(19)
	if assistant {
		n = 15 + g.r.IntN(46)
	}
	var b strings.Builder
	start := true
	for i := range n {
		w := g.words[g.zipf.Uint64()]
		if start {
			w = strings.ToUpper(w[:1]) + w[1:]
			start = false
		}
		b.WriteString(w)
		switch {
		case i == n-1 || g.r.IntN(11) == 0:
			if g.r.IntN(6) == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte('.')
			}
			start = true
		case g.r.IntN(9) == 0:
			b.WriteByte(',')
		}
		if i < n-1 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
