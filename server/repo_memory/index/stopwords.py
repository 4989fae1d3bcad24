"""The function words a query is not searched by: articles, prepositions, conjunctions, pronouns, auxiliaries and
question words, which every memory in the language holds and which say nothing of what a question is about.

Only English ones were left out, so in a Russian question "в" ("in") was a word like any other: "погода в Москве"
found every note holding "в", and hybrid recall gave those as word matches, without its caution that they may be
unrelated; a record holding "в" three times came before the answer. The lists below are short and curated: the most
frequent function words of the major languages written with spaces between words (Chinese, Japanese and Korean are
searched by pairs of characters: guards/cjk.py), as the query's words are (folded and lowercased: index/folding.py).
A word that is also a code or English term a developer asks by is left out of them ("ai", "os", "ci", "dir", "vi",
"sin", "ses", "nas", "comment", "son", "come", "man", "war", "hat", "ton", "era", "uno", "sans", "car", "c", "n"),
and so are negations (nicht, kein, ne … pas, non, не, لا, לא): a note of what fails says "sendet keine E-Mails",
and the question asks it so (measured: it put that record first). A question of nothing but function words is still
searched by them (query.py).
"""

from __future__ import annotations

ENGLISH = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can cannot could did do does doing don down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more most my myself
    no nor not now of off on once only or other ought our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve y o us use used uses using whenever""".split()
)  # "use" (stemmed as "us") and "whenever": skill descriptions say "use when …", so they matched every skill

OTHER = frozenset(
    # German
    """der die das den dem des ein eine einen einem einer eines und oder aber sondern denn dass ob wenn als wie weil
    im ins zum zur vom beim mit von zu auf für über unter nach bei aus durch gegen ohne um bis seit zwischen
    ich du er sie es wir ihr mich mir dich ihn ihm uns euch ihnen sich sein seine seinem seinen seiner ihre ihrem
    ihren ist sind waren wird werden wurde wurden haben hatte auch noch nur schon dann dort hier
    wo wer wann warum wieso welche welcher welches
    """
    # French
    """le la les l un une des du de au aux et ou mais donc ni que qu qui quoi dont où ce cet cette ces
    mon ma mes ta tes sa notre nos votre vos leur leurs je j tu il elle nous vous ils elles se te lui
    en dans sur sous par pour avec chez entre vers est sont était étaient été être ont avait
    quand pourquoi quel quelle quels quelles
    """
    # Spanish
    """el los las lo unos unas e del al con por para sobre hasta desde qué quien quién quienes cual cuál cuales
    cuáles como cómo cuando cuándo donde dónde porque es fue fueron está están estaba ser estar hay su sus mi
    mis tus yo él ella ellos ellas nosotros le nos este esta estos estas ese esa esos esas eso esto ya muy
    """
    # Portuguese
    """um uma uns umas da dos das na nos em ao aos à às pelo pela pelos pelas sem quem qual quais onde é são
    foram estão há seu sua seus suas meu minha meus minhas eu ele ela eles elas nós você vocês isso isto esse essa
    aquele aquela lhe já muito
    """
    # Italian
    """il gli di dello della dei degli delle dal dallo dalla dai dagli dalle nel nello nella nei negli nelle
    sul sullo sulla sui sugli sulle per tra fra ed che chi cui sono dove perché questo questa questi queste
    quello quella è si ne
    """
    # Russian (е for ё, as folded)
    """в во на с со к ко по о об обо от из у за для до при без над под про через и а но или да что чтобы как это
    этот эта эти то тот та те же ли бы я ты он она оно мы вы они его ее их им ему ей мне меня нас вас нам
    вам себя свой своя свои где когда почему зачем откуда куда кто какой какая какое какие который которая
    которое которые так там тут уже еще был была было были есть будет
    """
    # Arabic
    """في من إلى الى على عن مع هذا هذه ذلك تلك التي الذي الذين هو هي هم أنا نحن أنت و أو ثم لكن ما قد
    كان كانت أن إن ان كل بين عند هل كيف لماذا متى أين ماذا أي
    """
    # Hebrew
    """של את על עם זה זו זאת הוא היא הם הן אני אנחנו אתה כי אם או גם אבל מה איך למה מתי איפה יש כל אל
    מן עד בין""".split()
)

STOPWORDS = ENGLISH | OTHER
