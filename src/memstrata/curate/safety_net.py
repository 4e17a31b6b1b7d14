"""What a sentence says of health, kept when the state frames cannot read it.

The frames (:mod:`memstrata.curate.frames`) read an allergy, a condition, a medicine, a diet,
an accessibility need or a doctor's restriction when it is said in a form they know, and
give it its slot. People say these things in more ways than any set of forms holds ("the
neurologist added a patch at night, rotigotine", "医生说半月板有点磨损", "his drinks stay
thickened"), and a safety fact that is lost is the one loss an agent cannot make good: it
suggests the dish, the drug or the climb. So a sentence that names a health matter and gave
no health state is kept whole, as a health fact without a slot, which L1 serves in its Safety
section (:mod:`memstrata.curate.essentials`). It sets no state, so it supersedes nothing; a
later statement of the frames about the same thing does not close it either, which is why it
is the net under the frames and not a way around them.

What names a health matter (:func:`health_matter`) is closed and said in one place: the
lexicon's conditions, medicines (by name or by a drug's ending), diets and accessibility
needs, and the words of health care in English and Chinese (an allergy, an intolerance, a
diagnosis, a prescription, a dose, an inhaler, oxygen at home, surgery, the emergency room,
a device such as a pacemaker, a disease known by the form of its name ("-itis", "-osis", a
syndrome, "I have MS", 得了带状疱疹, 做过肾移植), a measure such as blood sugar or
cholesterol, sobriety, a body's reaction to what it eats or
touches ("I break out in hives", "dairy wrecks my stomach", "我一吃芒果嘴就肿"), and what a
doctor, a nurse or a therapist said, in either language or mixed ("Doctor 说我..."). Words
that only sound like it do not count: "allergy season" does, "a doctor's appointment I'm
late for" does not name what the doctor said, nor "a rash decision", "I stayed sober to
drive" or "吃完饭就吐槽" a reaction, nor "我这人有个毛病" (a habit) or "电脑中病毒了" a disease.
"""

from __future__ import annotations

from typing import Final

from memstrata.curate import lexicon
from memstrata.curate import patterns as re

#: the people of health care, whose words about the speaker are a health matter
_CARERS_EN: Final = (
    r"(?:doctor|doc|dr|gp|neurologist|cardiologist|consultant|specialist|physio|"
    r"physiotherapist|therapist|dietitian|dietician|nutritionist|pharmacist|surgeon|"
    r"obstetrician|ob|midwife|paediatrician|pediatrician|dermatologist|endocrinologist|"
    r"oncologist|rheumatologist|allergist|nurse|dentist|optician|ophthalmologist|urologist|"
    r"gastroenterologist|psychiatrist|hospital|clinic)"
)
_CUES_EN: Final = re.compile(
    r"\b(?P<allergy>allerg\w*|anaphyla\w*|epi-?pens?)\b|"
    r"\b(?P<intolerance>intoleran(?:t|ce))\b|"
    r"\b(?P<diagnosis>diagnos\w+)\b|"
    r"\b(?P<medicine>prescri\w+|medications?|meds|inhalers?|dosage|doses?|\d+\s?mg|"
    r"antibiotics?|painkillers?|steroids?|injections?)\b|"
    r"\b(?P<care>oxygen|dialysis|chemo\w*|radiotherapy|surgery|"
    r"physio(?:therapy)?|rehab|thickened|puréed|pureed|tube[- ]fed|catheter|"
    # the emergency room as a place one is taken to, not a ward one works on ("ER nurse")
    r"emergency room|(?-i:ER|A&E)(?!\s*(?:nurses?|doctors?|docs?|physicians?|residents?|"
    r"techs?|shifts?|staff|rotation)\b)|pacemaker|cpap|insulin pump|stent|hearing aids?|"
    r"crutches|wheelchair)(?![\w&])|"
    r"\b(?P<condition>(?:I'm|I am|he's|she's|is|am) type [12]|"
    # a disease by the form of its name, which no list holds whole: arthritis, colitis,
    # endometriosis, psoriasis, anaemia, fibromyalgia, neuropathy, melanoma, a syndrome
    r"[a-z]{3,}(?:itis|iasis|aemia|emia|algia|opathy|plegia)|"
    r"(?!(?:hypn|osm|symbi|metamorph|progn|diagn)osis)[a-z]{3,}osis|"
    r"(?:melan|glauc|lymph|carcin|myel|sarc|fibr)oma|"
    r"(?:[a-z]+'s|[a-z]+) (?:syndrome|disease|disorder|deficiency)|"
    r"lupus|vertigo|tinnitus|shingles|cold sores|blood clots?|dvt|immunocompromised|"
    r"transplant|flare-?ups?|flaring|"
    r"(?:I have|I've got|I've|diagnosed with|has)\s+(?-i:[A-Z]{2,5})"
    r"(?=\s*(?:[,.;!]|$|since\b|and\b|too\b)))\b|"
    r"\b(?P<measure>cholesterol|blood (?:sugar|pressure)|a1c|hba1c|"
    r"(?:kidney|liver|thyroid) function)\b|"
    r"\b(?P<sobriety>sober (?:for|since)|(?:days|weeks|months|years) sober|sobriety|"
    r"in recovery(?! mode))\b|"
    r"\b(?P<reaction>hives|break(?:s|ing)? out in|broke out in|"
    r"(?:throw|threw) up (?:if|when|whenever|after|every time)|"
    r"swell(?:s|ed|ing)? up|(?:wrecks?|upsets?|destroys?|kills?) my (?:stomach|gut)|"
    r"(?:doesn't|don't|does not|do not) agree with (?:me|him|her)|"
    r"had an? (?:bad |severe |allergic |nasty )?reaction|"
    r"(?:sick|ill|nauseous) (?:if|when|whenever|after) I (?:eat|drink|have))\b|"
    rf"\b(?P<said>{_CARERS_EN}\s+(?:\w+\s+){{0,3}}(?:said|says|told|tells|wants|put|puts|"
    r"added|adds|prescribed|switched|changed|found|recommended|recommends|advised|advises|"
    r"cleared|ruled|thinks|reckons|mentioned|moved|upped|lowered|increased|reduced))\b",
    re.IGNORECASE,
)
_CUES_ZH: Final = re.compile(
    r"(?P<allergy>过敏|过敏性休克|肾上腺素笔)|"
    r"(?P<intolerance>不耐受)|"
    r"(?P<diagnosis>确诊|诊断|查出)|"
    r"(?P<medicine>处方|开了[^，。,.！!？?]{0,8}药|[吃用服停换上加减]药|药物|药量|剂量|毫克|"
    r"吸入剂|打针|注射|贴片)|"
    r"(?P<care>吸氧|制氧机|透析|化疗|放疗|手术|住院|忌口|鼻饲|糊状|流食|增稠|康复训练|起搏器|"
    r"呼吸机|胰岛素泵|心脏支架|支架手术|轮椅)|"
    r"(?P<measure>胆固醇|血糖|血压|血脂|肾功能|肝功能)|"
    # a disease by the form of its name after 有, 得了, 患, 查出, 确诊: 带状疱疹, 红斑狼疮,
    # 类风湿, 乳腺癌, 脂肪肝, 肾移植, 骨质疏松, 耳鸣
    r"(?P<condition>(?:有|得了|得过|患有|患了|患过|查出|确诊|做过|做了)[^，。,.！!？?；;]{0,6}?"
    r"(?:(?<!毛)病(?!毒)|症|炎(?!热)|癌|瘤|综合征|疱疹|疹子|狼疮|风湿|结石|结节|骨折|衰竭|溃疡|"
    r"移植|脂肪肝|疏松|耳鸣|房颤|痔疮|贫血|哮喘|三高)|骨质疏松|耳鸣|房颤)|"
    r"(?P<reaction>[吃喝碰闻沾摸][^，。,.！!？?；;]{0,6}[就会都][^，。,.！!？?；;]{0,4}"
    r"(?:拉肚子|腹泻|起疹子|起红疹|长疹子|出疹子|发痒|痒|肿|呕吐|吐(?!槽)|胃疼|胃痛|肚子疼|"
    r"呼吸困难|喘不上气|休克|头晕))|"
    r"(?P<said>(?<![跟和对给向找问])"
    r"(?:医生|大夫|医师|护士|药师|营养师|康复师|治疗师|理疗师|(?i:doctor|doc|dr|gp|nurse))\s*"
    r"(?:说|讲|话|让|叫|建议|开|嘱咐|交代|要求|不让|同意))"
)


def health_matter(sentence: str) -> str | None:
    """The health matter ``sentence`` names, as a short canonical word (``asthma``,
    ``metformin``, ``allergy``, ``said``...), or None when it names none."""
    if key := lexicon.health_key(sentence):
        return key
    for word in re.findall(r"[A-Za-z]{6,}", sentence):
        if lexicon.is_medication(word):
            return word.casefold()
    for cues in (_CUES_EN, _CUES_ZH):
        match = cues.search(sentence)
        if match is not None and match.lastgroup is not None:
            return match.lastgroup
    return None
